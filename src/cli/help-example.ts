/**
 * An example of a command's --help, for yargs's `.example(...)`. yargs sets an example and its
 * description side by side and breaks the command to fit half the width, which makes it impossible
 * to paste; here the description is a `# …` line above the command, each on a line of its own.
 */
export function example(command: string, description: string): [string, string] {
  return [`# ${description}\n${command}`, ''];
}
