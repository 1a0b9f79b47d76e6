// Grant rate over the last hour and the last day (GET .../rates).
import { getRates } from "../api/endpoints";
import type { RateWindow } from "../api/types";
import { usePoll } from "../lib/poll";
import { denseSeries } from "../lib/series";
import { useAuth } from "./auth";
import { RateChart } from "./RateChart";

const REFRESH_MS = 10_000;

function WindowChart({ name, window, title }: { name: string; window: RateWindow; title: string }) {
  const { token } = useAuth();
  const polled = usePoll(async () => {
    const rates = await getRates(token, name, window);
    return { series: denseSeries(rates), bucketSeconds: rates.bucketSeconds };
  }, REFRESH_MS, [token, name, window]);
  return (
    <div class="window">
      <h3>{title}</h3>
      {polled.data ? (
        <RateChart window={window} series={polled.data.series} bucketSeconds={polled.data.bucketSeconds} />
      ) : (
        !polled.error && <p>Loading…</p>
      )}
      {polled.error && <p role="alert" class="error">Rates unavailable: {polled.error.message}</p>}
    </div>
  );
}

export function RateCharts({ name }: { name: string }) {
  return (
    <section aria-labelledby="rates-h">
      <h2 id="rates-h">Grant rate</h2>
      <div class="charts">
        <WindowChart name={name} window="1h" title="Last hour" />
        <WindowChart name={name} window="24h" title="Last day" />
      </div>
    </section>
  );
}
