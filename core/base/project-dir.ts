/** The project root: relative paths in stack files (local repositories, renderDir) and the tools/ scripts resolve against it. */
import * as path from "node:path";

export const PROJECT_DIR = path.resolve(__dirname, "../..");
