// IDs granted per bucket over one window, drawn by uPlot. The instance is
// published on window.__rangeidCharts[window] so tests can read its data.
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import type { RateWindow } from "../api/types";
import { grouped } from "../lib/decimal";
import type { Series } from "../lib/series";

declare global {
  interface Window {
    __rangeidCharts?: Partial<Record<RateWindow, uPlot>>;
  }
}

const HEIGHT = 180;
const compact = (v: number) => new Intl.NumberFormat("en", { notation: "compact", maximumFractionDigits: 1 }).format(v);

export function RateChart({ window: win, series, bucketSeconds }: { window: RateWindow; series: Series; bucketSeconds: number }) {
  const box = useRef<HTMLDivElement>(null);
  const chart = useRef<uPlot | null>(null);

  useEffect(() => {
    const el = box.current!;
    const u = new uPlot(
      {
        width: el.clientWidth || 600,
        height: HEIGHT,
        scales: { x: { time: true } },
        series: [{}, { label: `IDs per ${bucketSeconds === 60 ? "minute" : `${bucketSeconds} s`}`, stroke: "#2463eb", fill: "rgba(36,99,235,0.15)", width: 1.5 }],
        axes: [{}, { size: 56, values: (_u, splits) => splits.map(compact) }],
        legend: { show: true },
      },
      [series.times, series.ids],
      el,
    );
    chart.current = u;
    (window.__rangeidCharts ??= {})[win] = u;
    const resize = new ResizeObserver(() => u.setSize({ width: el.clientWidth, height: HEIGHT }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      u.destroy();
      chart.current = null;
      if (window.__rangeidCharts?.[win] === u) delete window.__rangeidCharts[win];
    };
  }, [win, bucketSeconds]);

  useEffect(() => {
    chart.current?.setData([series.times, series.ids]);
  }, [series]);

  const peak = series.ids.reduce((m, v) => Math.max(m, v), 0);
  return (
    <figure class="chart">
      <div ref={box} role="img" aria-label={`IDs granted over the last ${win === "1h" ? "hour" : "day"}`} />
      <figcaption>
        {grouped(series.totalIds)} IDs in {grouped(String(series.totalRanges))} ranges; busiest bucket {grouped(String(peak))} IDs.
      </figcaption>
    </figure>
  );
}
