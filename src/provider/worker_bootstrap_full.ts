/**
 * The sandbox worker entry for providers that import the whole framework
 * (`@hermes/memory`) rather than `@hermes/memory/provider`: it preloads
 * `mod.ts` (under the host's permissions, like any worker entry graph, so
 * the provider needs no read access to the framework's files), then runs
 * the ordinary bootstrap. Slower to start than the ordinary one (the whole
 * framework and its npm packages load in every worker). Not public API.
 *
 * @module
 */

import "../../mod.ts";
import "./worker_bootstrap.ts";
