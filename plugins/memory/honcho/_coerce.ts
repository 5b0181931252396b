// How the Honcho provider coerces the values it reads from `honcho.json`,
// `config.yaml` and the environment (private to the provider).
//
// Hermes reads honcho.json with Python semantics and so does this provider,
// on purpose (a home shared with Hermes must resolve the same way):
//
// | Python                    | here            | used for                          |
// | ------------------------- | --------------- | --------------------------------- |
// | `bool(v)` / `x or y`      | `truthy`        | flags, `enabled`, `saveMessages`  |
// | `int(v)`                  | `pyInt`         | counts, cadences, `writeFrequency`|
// | `float(v)`                | `pyFloat`       | timeouts, first-turn waits        |
// | `str(v)`                  | `pythonStr`     | ids, names, host keys             |
//
// So `"false"` is a true flag (a non-empty string), `"3"` and `3.9` are the
// integer 3, `"1.5"` is not an integer, `"nan"` is a float.

export {
  pythonFloat as pyFloat,
  pythonInt as pyInt,
  pythonTruthy as truthy,
} from "../../../src/provider/mod.ts";
