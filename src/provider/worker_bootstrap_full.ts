/**
 * The sandbox entry for providers that import `@hermes/memory`: preloads
 * `mod.ts` under the host's permissions (the provider needs no read access
 * to the framework), then runs the ordinary bootstrap; slower to start.
 *
 * @module
 */

import "../../mod.ts";
import "./worker_bootstrap.ts";
