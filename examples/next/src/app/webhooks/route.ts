// /webhooks: the App Router route handler. It reads the body itself, as bytes. Exported under every
// method so that hookline answers the others 405 with Allow: POST (Next's own 405 has neither).
import { webhookRoute } from '@hookline/next';
import { receiver } from '../../lib/receiver';

const route = webhookRoute(receiver);
export { route as POST, route as GET, route as HEAD, route as PUT, route as PATCH, route as DELETE, route as OPTIONS };
