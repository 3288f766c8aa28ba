/**
 * The door of src/load/time/. The target's clock as a scenario needs it: the clock driver of the simulator's clock, what a
 * scenario needs of it (clock-needs), and a clock that runs on during a run.
 */
export * from './clock-driver.js';
export * from './clock-needs.js';
export * from './running-clock.js';
