/** The example policy file of the project's first design (its §6), word for word: the example several policy tests decide against. */
export const DESIGN_POLICY_YAML = `version: 1
default: deny
rules:
  - allow: { tools: [read_file, list_dir, glob, grep] }
  - allow: { tools: [write_file, edit_file], paths: ["src/**", "test/**"] }
  - allow: { shell: ["npm test", "npm run build", "git diff *", "git status"] }
  - deny:  { shell: ["git push *"], reason: no pushes from CI }
  - deny:  { paths: [".github/**", "**/.env"] }
`;
