import { afterAll } from 'vitest';
import { removeTempHomes } from './helpers/tempStore';

// A whole suite run made ~1,000 store folders under /tmp; each test file now removes its own.
afterAll(removeTempHomes);
