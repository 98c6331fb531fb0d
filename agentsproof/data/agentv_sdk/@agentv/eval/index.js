export * from '../../agentv/index.js';
