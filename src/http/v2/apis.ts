import { asData, defineRoute } from '../route.js';
import { createApiRequest, createApiResponse } from '../schemas/apis.js';

export const apiRoutes = [
  defineRoute({
    method: 'POST',
    path: '/v2/apis.createApi',
    style: 'v2',
    tag: 'apis',
    summary: 'Create an API (a container of keys). Needs api.*.create_api.',
    auth: 'required',
    input: 'body',
    request: createApiRequest,
    response: createApiResponse,
    handle: ({ engine }, rootKey, input) => asData(engine.apis.createApi(rootKey, input)),
  }),
];
