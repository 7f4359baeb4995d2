// The care pages' clock: the app's, so every app page shows times the same way.
export * from '../app/time.js';
