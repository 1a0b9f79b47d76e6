// Entry point: take a token from a sign-in link, then mount the page.
import "uplot/dist/uPlot.min.css";
import "./style.css";
import { render } from "preact";
import { takeTokenFromFragment } from "./lib/token";
import { App } from "./views/App";

takeTokenFromFragment();
render(<App />, document.getElementById("app")!);
