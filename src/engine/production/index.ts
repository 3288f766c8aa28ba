export { ProductionProfile, type ProductionProfileOptions, type ProductionStats, replaySeed } from './profile.js';
export { PRODUCTION_FIGURES, MAX_REGIONS, type ProductionFigures, checkFigures } from './figures.js';
export { type EngineSurface } from './region-view.js';
export { type RegionStats } from './region.js';
