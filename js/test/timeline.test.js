// A turn or call too short to see at the timeline's scale is drawn MIN_BAR_PX wide (spec U-4).
import assert from "node:assert/strict";
import { test } from "node:test";

import { MIN_BAR_PX, drawnPlace, gapClasses } from "../src/timeline.js";

const pixels = (seconds) => (seconds / 3030) * 900; // an axis of 3030 s drawn 900 px wide

test("a few milliseconds of a long session are drawn MIN_BAR_PX wide from their start", () => {
  const drawn = drawnPlace(1000, 0.005, 0, 3030, 900);
  assert.equal(drawn.x, 1000);
  assert.ok(Math.abs(pixels(drawn.w) - MIN_BAR_PX) < 1e-9);
  assert.ok(MIN_BAR_PX >= 4);
});

test("at the axis's end, a short shape ends there, still covering its true span", () => {
  const drawn = drawnPlace(3030.001, 0.003, 0, 3030.005, 900);
  assert.ok(Math.abs(drawn.x + drawn.w - 3030.005) < 1e-9); // on the picture, where a pointer finds it
  assert.ok(drawn.x <= 3030.001 && drawn.x + drawn.w >= 3030.004);
  const zoomed = drawnPlace(59.9999, 0.0001, 50, 10, 900); // a zoomed turn's axis: 50 s to 60 s
  assert.ok(Math.abs(zoomed.x + zoomed.w - 60) < 1e-9);
});

test("a shape wide enough keeps its true place and width: the scale does not change", () => {
  assert.deepEqual(drawnPlace(1, 2999, 0, 3030, 900), { x: 1, w: 2999 });
  assert.deepEqual(drawnPlace(5, 30, 0, 3030, 900), { x: 5, w: 30 }); // 8.9 px
});

test("before the picture is laid out, every shape keeps its true place", () => {
  assert.deepEqual(drawnPlace(3, 0.005, 0, 3030, 0), { x: 3, w: 0.005 });
  assert.deepEqual(drawnPlace(3, 0.005, 0, 0, 900), { x: 3, w: 0.005 });
});

test("where the clock changed is drawn apart from idle time, as a page draws it", () => {
  const idle = gapClasses({ x: 0, w: 15, label: "12m idle", clock: false });
  const clock = gapClasses({ x: 0, w: 15, label: "clock changed", clock: true });
  assert.deepEqual(idle, { shape: "tf-tl-gap", label: "tf-tl-idle" });
  assert.deepEqual(clock, { shape: "tf-tl-gap tf-tl-clock", label: "tf-tl-idle tf-tl-clock" });
});
