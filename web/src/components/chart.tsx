import { useEffect, useRef } from 'preact/hooks';
import type { ChartConfiguration } from '../lib/charts';
import { Chart } from '../lib/charts';

/**
 * A Chart.js chart. The canvas is a picture (`role="img"` with a sentence); the numbers it draws
 * are printed in a table beside it for anyone who cannot see it.
 */
export function ChartCanvas({ config, label, height }: { config: ChartConfiguration; label: string; height: number }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    if (!canvas.current) return;
    const chart = new Chart(canvas.current, config);
    return () => chart.destroy();
  }, [config]);
  return (
    <div class="chart-frame" style={{ height: `${height}px` }}>
      <canvas ref={canvas} role="img" aria-label={label} />
    </div>
  );
}
