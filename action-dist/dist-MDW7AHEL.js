import { createRequire as __rhemaCreateRequire } from "node:module"; import { fileURLToPath as __rhemaFileURLToPath } from "node:url"; import { dirname as __rhemaDirname } from "node:path"; const require = __rhemaCreateRequire(import.meta.url); const __filename = __rhemaFileURLToPath(import.meta.url); const __dirname = __rhemaDirname(__filename);
<<<<<<<< HEAD:action-dist/dist-ZODWGJRW.js
import{c as a}from"./chunk-VPFAH5GQ.js";import"./chunk-ZEA7DX2J.js";export default a();
========
import{c as a}from"./chunk-LXHESTXR.js";import"./chunk-43UO3RUH.js";export default a();
>>>>>>>> 8c9f3c7 (#27 (d): action-dist rebuilt: the Bedrock and Vertex adapters and their SDKs in chunks of their own (10,635,994 → 11,291,480 bytes; index.js +3 KB)):action-dist/dist-MDW7AHEL.js
