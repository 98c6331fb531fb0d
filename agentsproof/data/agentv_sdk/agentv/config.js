// agentv's `agentv/config`: defineConfig returns the configuration it is given.
export function defineConfig(config) {
  return config;
}
