export const SCHEMA: string;
export const WIRE_TS: string;
export function wireTypes(): Promise<string>;
