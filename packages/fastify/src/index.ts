// The Fastify plugin
export { hooklinePlugin, type HooklinePluginOptions } from './hookline-plugin';
