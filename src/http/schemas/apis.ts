import type { CreateApiInput } from '../../engine/index.js';
import { type Schema, object, string } from '../schema.js';

export const createApiRequest: Schema<CreateApiInput> = object({ name: string({ minLength: 1, maxLength: 255 }) });
export const createApiResponse = object({ apiId: string() });
