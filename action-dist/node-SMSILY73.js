import { createRequire as __rhemaCreateRequire } from "node:module"; import { fileURLToPath as __rhemaFileURLToPath } from "node:url"; import { dirname as __rhemaDirname } from "node:path"; const require = __rhemaCreateRequire(import.meta.url); const __filename = __rhemaFileURLToPath(import.meta.url); const __dirname = __rhemaDirname(__filename);
<<<<<<<< HEAD:action-dist/node-U6DRKMRW.js
import{a,b,c,d,e,f,g}from"./chunk-P3C4WTJW.js";import"./chunk-ZEA7DX2J.js";export{a as child_process,b as crypto,c as fs,d as os,e as path,f as stream,g as util};
========
import{a,b,c,d,e,f,g}from"./chunk-P3C4WTJW.js";import"./chunk-43UO3RUH.js";export{a as child_process,b as crypto,c as fs,d as os,e as path,f as stream,g as util};
>>>>>>>> 8c9f3c7 (#27 (d): action-dist rebuilt: the Bedrock and Vertex adapters and their SDKs in chunks of their own (10,635,994 → 11,291,480 bytes; index.js +3 KB)):action-dist/node-SMSILY73.js
