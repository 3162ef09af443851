/**
 * A task for the layered-workspace tests: over `../fixture` (which holds `shared.txt` = "base"),
 * it writes `mine-<id>.txt`, runs `command` in the shell, and is checked for seeing its own file
 * alone and its own line appended to `shared.txt` alone — each trial's layer is its own — and by
 * `checks` (YAML flow mappings, `{ name: …, run: … }`).
 */
export function layeredTask(id: string, command: string, checks: readonly string[]): string {
  return `prompt: Change it.
policy: ../policy.yaml
workspace: { from: ../fixture }
model:
  provider: scripted
  script:
    - call: write_file
      input: { path: "mine-${id}.txt", content: "${id}\\n" }
    - call: shell
      input: { command: ${JSON.stringify(command)} }
    - say: done
checks:
  - { name: only its own file, run: 'test -f mine-${id}.txt && test "$(ls mine-*.txt)" = mine-${id}.txt' }
  - { name: its own edit alone, run: 'test "$(cat shared.txt)" = "$(printf "base\\\\n${id}")"' }
${checks.map((check) => `  - ${check}\n`).join("")}`;
}
