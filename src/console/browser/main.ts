/// <reference lib="dom" />
// The console's entry point (docs/console.md): the shell renders into #app.
import { h, render } from "preact";
import { App } from "./app.ts";

const root = document.getElementById("app")!;
root.textContent = "";
render(h(App, null), root);
