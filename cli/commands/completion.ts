import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { CliExit, EXIT } from '../exit.js';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

/** How an option's value is completed. */
type ValueKind =
  | { kind: 'flag' }
  | { kind: 'choices'; choices: readonly string[] }
  | { kind: 'file' }
  | { kind: 'dir' }
  | { kind: 'value' };

interface OptionSpec {
  readonly long?: string;
  readonly short?: string;
  readonly description: string;
  readonly value: ValueKind;
}

/** One command of the tree, reachable under each of its names (aliases included). */
interface CommandSpec {
  readonly path: string;
  readonly names: readonly string[];
  readonly description: string;
  readonly options: readonly OptionSpec[];
  /** Sub-command names (with aliases) and, after them, the choices of a first argument. */
  readonly words: readonly { word: string; description: string }[];
  /** The sub-command names alone: the words that lead to another command path. */
  readonly commands: readonly string[];
}

function valueKind(flags: string, takesValue: boolean, choices: readonly string[] | undefined): ValueKind {
  if (!takesValue) return { kind: 'flag' };
  if (choices?.length) return { kind: 'choices', choices };
  const placeholder = /[<[]([^>\]]+)[>\]]/.exec(flags)?.[1] ?? '';
  if (/^(file|path)$/i.test(placeholder)) return { kind: 'file' };
  if (/^(dir|folder)$/i.test(placeholder)) return { kind: 'dir' };
  return { kind: 'value' };
}

const isHidden = (cmd: Command) => (cmd as unknown as { _hidden?: boolean })._hidden === true;

/** Walks the commander program: every command path with its options and next words. */
export function describeProgram(program: Command): CommandSpec[] {
  const specs: CommandSpec[] = [];
  const visit = (cmd: Command, path: string) => {
    const children = cmd.commands.filter((c) => !isHidden(c));
    const words = children.flatMap((c) => [c.name(), ...c.aliases()].map((word) => ({ word, description: c.description() })));
    if (path === '' && children.length > 0) words.push({ word: 'help', description: 'help for a command' });
    const commands = words.map((w) => w.word);
    const firstArg = cmd.registeredArguments[0];
    for (const choice of firstArg?.argChoices ?? []) words.push({ word: choice, description: firstArg?.description ?? '' });
    const options: OptionSpec[] = cmd.options
      .filter((o) => !o.hidden)
      .map((o) => ({
        ...(o.long ? { long: o.long } : {}),
        ...(o.short ? { short: o.short } : {}),
        description: o.description,
        value: valueKind(o.flags, o.required || o.optional, o.argChoices),
      }));
    options.push({ long: '--help', short: '-h', description: 'show help', value: { kind: 'flag' } });
    specs.push({ path, names: [cmd.name(), ...cmd.aliases()], description: cmd.description(), options, words, commands });
    for (const child of children) {
      for (const name of [child.name(), ...child.aliases()]) visit(child, path ? `${path} ${name}` : name);
    }
  };
  visit(program, '');
  return specs;
}

const sq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** An option's spellings: the long one, then the short one, where it has them. */
const flagsOf = (o: OptionSpec): string[] => [o.long, o.short].filter((x): x is string => Boolean(x));

function optionWords(spec: CommandSpec): string[] {
  return spec.options.flatMap(flagsOf);
}

function valueSpec(value: ValueKind): string | undefined {
  switch (value.kind) {
    case 'flag':
      return undefined;
    case 'choices':
      return `choices ${value.choices.join(' ')}`;
    default:
      return value.kind;
  }
}

/** A shell function that is one POSIX `case` over `subject` (the command path by default), with one arm a line. */
function caseFunction(name: string, arms: readonly string[], subject = '$1'): string {
  return `${name}() {\n  case "${subject}" in\n${arms.join('\n')}\n  esac\n}`;
}

/** A case statement over option values, shared by the bash and zsh scripts (both POSIX `case`). */
function valuesFunction(name: string, specs: readonly CommandSpec[]): string {
  const cases = specs.flatMap((spec) =>
    spec.options.flatMap((o) => {
      const v = valueSpec(o.value);
      if (!v) return [];
      return flagsOf(o).map((flag) => `    ${sq(`${spec.path}|${flag}`)}) echo ${sq(v)} ;;`);
    }),
  );
  return caseFunction(name, cases, '$1|$2');
}

/** How one shell prints, for a command path, its next words, its sub-commands and its options. */
interface LookupFormat {
  words(spec: CommandSpec): string;
  commands(spec: CommandSpec): string;
  options(spec: CommandSpec): string;
}

/**
 * The lookup functions shared by the bash and zsh scripts: `_hanactl_words`, `_hanactl_commands`,
 * `_hanactl_options` and `_hanactl_values`, each a `case` over the command path; `format` prints an arm's answer.
 */
function lookupFunctions(specs: readonly CommandSpec[], format: LookupFormat): string {
  const lookup = (name: string, keep: (s: CommandSpec) => boolean, print: (s: CommandSpec) => string) => {
    const arms = specs.filter(keep).map((s) => `    ${sq(s.path)}) ${print(s)} ;;`);
    return caseFunction(name, arms);
  };
  return [
    lookup('_hanactl_words', (s) => s.words.length > 0, format.words),
    lookup('_hanactl_commands', (s) => s.commands.length > 0, format.commands),
    lookup('_hanactl_options', () => true, format.options),
    valuesFunction('_hanactl_values', specs),
  ].join('\n');
}

export function bashScript(program: Command): string {
  const lookups = lookupFunctions(describeProgram(program), {
    words: (s) => `echo ${sq(s.words.map((w) => w.word).join(' '))}`,
    commands: (s) => `echo ${sq(s.commands.join(' '))}`,
    options: (s) => `echo ${sq(optionWords(s).join(' '))}`,
  });
  return `# bash completion for hanactl, generated by \`hanactl completion bash\`.
# Now:      source <(hanactl completion bash)
# For good: hanactl completion bash > ~/.local/share/bash-completion/completions/hanactl
${lookups}
_hanactl() {
  local cur=\${COMP_WORDS[COMP_CWORD]} prev=\${COMP_WORDS[COMP_CWORD-1]} path='' word spec i
  for ((i = 1; i < COMP_CWORD; i++)); do
    word=\${COMP_WORDS[i]}
    [[ $word == -* ]] && continue
    [[ " $(_hanactl_commands "$path") " == *" $word "* ]] && path=\${path:+$path }$word
  done
  if [[ $prev == -* ]]; then
    spec=$(_hanactl_values "$path" "$prev")
    case $spec in
      choices\\ *) COMPREPLY=($(compgen -W "\${spec#choices }" -- "$cur")); return ;;
      file) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur")); return ;;
      dir) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- "$cur")); return ;;
      value) COMPREPLY=(); return ;;
    esac
  fi
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$(_hanactl_options "$path")" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$(_hanactl_words "$path")" -- "$cur"))
  fi
}
complete -F _hanactl hanactl
`;
}

const zdesc = (word: string, description: string) => sq(`${word.replace(/:/g, '\\:')}:${description}`);

export function zshScript(program: Command): string {
  const lookups = lookupFunctions(describeProgram(program), {
    words: (s) => `print -rl -- ${s.words.map((w) => zdesc(w.word, w.description)).join(' ')}`,
    commands: (s) => `print -rl -- ${s.commands.map(sq).join(' ')}`,
    options: (s) => `print -rl -- ${s.options.flatMap((o) => flagsOf(o).map((f) => zdesc(f, o.description))).join(' ')}`,
  });
  return `#compdef hanactl
# zsh completion for hanactl, generated by \`hanactl completion zsh\`.
# Now:      source <(hanactl completion zsh)
# For good: hanactl completion zsh > "\${fpath[1]}/_hanactl"   (then start a new shell)
${lookups}
_hanactl() {
  local path_='' word spec i
  local -a candidates names
  for ((i = 2; i < CURRENT; i++)); do
    word=\${words[i]}
    [[ $word == -* ]] && continue
    names=(\${(f)"$(_hanactl_commands "$path_")"})
    (( \${names[(Ie)$word]} )) && path_=\${path_:+$path_ }$word
  done
  local cur=\${words[CURRENT]} prev=\${words[CURRENT-1]}
  if [[ $prev == -* ]]; then
    spec=$(_hanactl_values "$path_" "$prev")
    case $spec in
      choices\\ *) compadd -- \${=spec#choices }; return ;;
      file) _files; return ;;
      dir) _files -/; return ;;
      value) return ;;
    esac
  fi
  if [[ $cur == -* ]]; then
    candidates=(\${(f)"$(_hanactl_options "$path_")"})
    _describe -t options option candidates
  else
    candidates=(\${(f)"$(_hanactl_words "$path_")"})
    (( \${#candidates} )) && _describe -t commands command candidates
  fi
}
if [[ "\${funcstack[1]}" == _hanactl ]]; then _hanactl "$@"; else compdef _hanactl hanactl; fi
`;
}

const fq = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

export function fishScript(program: Command): string {
  const specs = describeProgram(program);
  const subs = specs
    .filter((s) => s.commands.length > 0)
    .map((s) => `        case ${fq(s.path)}\n            printf '%s\\n' ${s.commands.map(fq).join(' ')}`);
  const lines: string[] = [];
  for (const spec of specs) {
    const at = `-n ${fq(`__hanactl_at ${fq(spec.path)}`)}`;
    for (const w of spec.words) lines.push(`complete -c hanactl ${at} -a ${fq(w.word)} -d ${fq(w.description)}`);
    for (const o of spec.options) {
      const flags = [o.long ? `-l ${fq(o.long.replace(/^--/, ''))}` : '', o.short ? `-s ${fq(o.short.replace(/^-/, ''))}` : '']
        .filter(Boolean)
        .join(' ');
      let value = '';
      if (o.value.kind === 'choices') value = ` -x -a ${fq(o.value.choices.join(' '))}`;
      else if (o.value.kind === 'file') value = ' -r -F';
      else if (o.value.kind === 'dir') value = " -x -a '(__fish_complete_directories)'";
      else if (o.value.kind === 'value') value = ' -x';
      lines.push(`complete -c hanactl ${at} ${flags}${value} -d ${fq(o.description)}`);
    }
  }
  return `# fish completion for hanactl, generated by \`hanactl completion fish\`.
# Now:      hanactl completion fish | source
# For good: hanactl completion fish > ~/.config/fish/completions/hanactl.fish
function __hanactl_words
    switch "$argv[1]"
${subs.join('\n')}
    end
end
function __hanactl_path
    set -l path ''
    for word in (commandline -opc)[2..-1]
        string match -q -- '-*' $word; and continue
        if contains -- $word (__hanactl_words "$path")
            if test -z "$path"
                set path $word
            else
                set path "$path $word"
            end
        end
    end
    echo $path
end
function __hanactl_at
    set -l path (__hanactl_path)
    test "$path" = "$argv[1]"
end
complete -c hanactl -f
${lines.join('\n')}
`;
}

/** `hanactl completion bash|zsh|fish`: the script, generated from the program's commands and options. */
export async function completion(ctx: CliContext, shell: string, program: Command): Promise<void> {
  switch (shell as Shell) {
    case 'bash':
      return ctx.out(bashScript(program));
    case 'zsh':
      return ctx.out(zshScript(program));
    case 'fish':
      return ctx.out(fishScript(program));
    default:
      throw new CliExit(EXIT.usage, `Unknown shell "${shell}"; choose one of ${SHELLS.join(', ')}.`);
  }
}
