// The terminal prompts, imported by computed specifier (cli_io.ts) so that
// inquirer stays out of the module graph Deno reads at every start.
export { confirm, input, password, select } from "npm:@inquirer/prompts@^8.8.0";
