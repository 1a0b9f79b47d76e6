// One overview row; skipped on refresh while its summary is unchanged.
import { Component } from "preact";
import { grouped } from "../lib/decimal";
import type { Row } from "../lib/overview";
import { idsPerSecond } from "../lib/rate";
import { namespaceHref } from "../lib/route";
import { CapacityBar } from "./CapacityBar";
import { Exhaustion } from "./Exhaustion";
import { Timestamp } from "./Timestamp";

export class NamespaceRow extends Component<{ row: Row }> {
  override shouldComponentUpdate(next: { row: Row }) {
    return next.row !== this.props.row;
  }

  override render() {
    const { summary: s, capacity, soon } = this.props.row;
    return (
      <tr class={soon ? "row-soon" : undefined} data-namespace={s.namespace}>
        <th scope="row"><a href={namespaceHref(s.namespace)}>{s.namespace}</a></th>
        <td><span class={`state state-${s.state}`}>{s.state}</span></td>
        <td><CapacityBar capacity={capacity} /></td>
        <td class="num" data-testid="remaining">{grouped(s.remaining)}</td>
        <td class="num">{idsPerSecond(s.grantRate.lastMinute.idsPerSecond)}</td>
        <td class="num">{idsPerSecond(s.grantRate.lastHour.idsPerSecond)}</td>
        <td><Exhaustion summary={s} /></td>
        <td><Timestamp at={s.lastGrantAt} /></td>
      </tr>
    );
  }
}
