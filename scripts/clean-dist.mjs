// Removes the previous build so deleted sources leave no stale files in dist/.
import { rmSync } from "node:fs";
rmSync(new URL("../dist", import.meta.url), { recursive: true, force: true });
