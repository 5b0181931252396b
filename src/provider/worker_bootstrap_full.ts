// The sandbox entry for providers that import `@hermes/memory`: preloads
// `mod.ts` under the host's permissions (the provider needs no read access to
// it), then runs the ordinary bootstrap.

import "../../mod.ts";
import "./worker_bootstrap.ts";
