// The charts, drawn by Chart.js (tree-shaken to the bar chart and its two scales). Only the
// dashboard and the operator's room load this module. Each chart is a picture of a table the page
// also prints, so a screen reader reads the table, not the canvas.

import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  LineController,
  LineElement,
  LinearScale,
  PointElement,
  Tooltip,
  type ChartConfiguration,
  type Plugin,
} from 'chart.js';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, LineController, LineElement, PointElement, Tooltip);
Chart.defaults.font.family = "'Public Sans Variable', system-ui, sans-serif";
Chart.defaults.font.size = 12;

export { Chart };
export type { ChartConfiguration, Plugin };

export const INK = {
  bar: 'rgba(28, 22, 17, 0.85)',
  barHover: 'rgba(28, 22, 17, 1)',
  danger: '#b31220',
  rule: '#d3cfc7',
  ruleStrong: '#867f76',
  text: '#57514c',
  accent: '#00bfc0',
  warn: 'rgba(235, 170, 45, 0.6)',
  termRule: '#21242a',
  termText: '#a7abb3',
};

export function reducedMotion(): boolean {
  return window.matchMedia('(prefers-reduced-motion: reduce)').matches;
}

/** A vertical line at `value` on the x scale (the budget's target), drawn over the bars. */
export function targetLine(value: number, color: string): Plugin<'bar'> {
  return {
    id: 'targetLine',
    afterDatasetsDraw(chart) {
      const x = chart.scales.x;
      if (!x) return;
      const px = x.getPixelForValue(value);
      const { top, bottom } = chart.chartArea;
      const ctx = chart.ctx;
      ctx.save();
      ctx.strokeStyle = color;
      ctx.lineWidth = 2;
      ctx.beginPath();
      ctx.moveTo(px, top - 3);
      ctx.lineTo(px, bottom + 3);
      ctx.stroke();
      ctx.restore();
    },
  };
}

/** A horizontal line at `value` on the y scale (the daily cap), dashed. */
export function capLine(value: number, color: string): Plugin<'line'> {
  return {
    id: 'capLine',
    afterDatasetsDraw(chart) {
      const y = chart.scales.y;
      if (!y) return;
      const py = y.getPixelForValue(value);
      const { left, right } = chart.chartArea;
      const ctx = chart.ctx;
      ctx.save();
      ctx.strokeStyle = color;
      ctx.setLineDash([2, 3]);
      ctx.lineWidth = 1;
      ctx.beginPath();
      ctx.moveTo(left, py);
      ctx.lineTo(right, py);
      ctx.stroke();
      ctx.restore();
    },
  };
}

/**
 * Each bar's value printed at its end (beside a horizontal bar, above a vertical one). A label
 * wider than its column is left out rather than shortened: the table beside the chart has it.
 */
export function valueLabels(format: (value: number, index: number) => string, color = INK.text): Plugin<'bar'> {
  return {
    id: 'valueLabels',
    afterDatasetsDraw(chart) {
      const meta = chart.getDatasetMeta(0);
      const values = chart.data.datasets[0]?.data ?? [];
      const horizontal = chart.options.indexAxis === 'y';
      const ctx = chart.ctx;
      ctx.save();
      ctx.fillStyle = color;
      ctx.font = `12px ${Chart.defaults.font.family}`;
      ctx.textBaseline = horizontal ? 'middle' : 'bottom';
      ctx.textAlign = horizontal ? 'left' : 'center';
      meta.data.forEach((bar, i) => {
        const value = Number(values[i] ?? 0);
        const { x, y, width } = bar.getProps(['x', 'y', 'width'], true) as { x: number; y: number; width: number };
        const text = format(value, i);
        if (!horizontal && ctx.measureText(text).width > width + 24) return;
        ctx.fillText(text, horizontal ? x + 6 : x, horizontal ? y : y - 4);
      });
      ctx.restore();
    },
  };
}

/** A horizontal bar chart of one series: monochrome unless `colors` says otherwise, labelled at each bar's end. */
export function horizontalBars(spec: {
  labels: string[];
  values: number[];
  colors?: string[];
  thickness: number;
  max?: number;
  tooltip: (value: number) => string;
  label: (value: number, index: number) => string;
  plugins?: Plugin<'bar'>[];
}): ChartConfiguration<'bar'> {
  return {
    type: 'bar',
    data: {
      labels: spec.labels,
      datasets: [
        {
          data: spec.values,
          backgroundColor: spec.colors ?? INK.bar,
          hoverBackgroundColor: spec.colors ?? INK.barHover,
          borderRadius: { topRight: 3, bottomRight: 3 },
          borderSkipped: false,
          barThickness: spec.thickness,
        },
      ],
    },
    options: {
      indexAxis: 'y',
      layout: { padding: { right: 150 } },
      responsive: true,
      maintainAspectRatio: false,
      animation: reducedMotion() ? false : { duration: 500, easing: 'easeOutQuad' },
      plugins: { legend: { display: false }, tooltip: { callbacks: { label: (ctx) => spec.tooltip(Number(ctx.raw)) } } },
      scales: {
        x: { display: false, beginAtZero: true, ...(spec.max !== undefined ? { max: spec.max } : {}) },
        y: { grid: { display: false }, border: { color: INK.ruleStrong }, ticks: { color: INK.text } },
      },
    },
    plugins: [...(spec.plugins ?? []), valueLabels(spec.label)],
  };
}
