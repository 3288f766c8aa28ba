/** The door of src/load/time: what other rooms and layers use of it. */
export * from './clock-driver.js';
export * from './clock-needs.js';
export * from './running-clock.js';
