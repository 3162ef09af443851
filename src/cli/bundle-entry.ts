/** The entry of the CLI's bundle (scripts/build-cli.mjs), which dist/src/cli/rhema.js runs: the CLI as this process. */
import { runAsProcess } from "./main.js";

void runAsProcess();
