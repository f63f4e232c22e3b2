import { HanactlError } from '../shared/errors.js';

/** Reads the whole of stdin as the password, dropping one trailing newline. */
export async function readPasswordFromStdin(stdin: NodeJS.ReadStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  const text = Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
  if (text === '') throw new HanactlError('INVALID_REQUEST', '--password-stdin was given but stdin was empty.');
  return text;
}

/** Asks for a password on the terminal without echoing it. */
export async function promptHidden(question: string, stdin: NodeJS.ReadStream, stderr: NodeJS.WriteStream): Promise<string> {
  if (!stdin.isTTY) throw new HanactlError('INVALID_REQUEST', 'Cannot prompt for a password without a terminal; use --password-stdin.');
  stderr.write(question);
  stdin.setRawMode(true);
  stdin.resume();
  return new Promise<string>((resolve, reject) => {
    let value = '';
    const onData = (data: Buffer) => {
      for (const ch of data.toString('utf8')) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') {
          done();
          resolve(value);
          return;
        }
        if (ch === '\u0003') {
          done();
          reject(new HanactlError('INVALID_REQUEST', 'Cancelled.'));
          return;
        }
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else value += ch;
      }
    };
    const done = () => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      stderr.write('\n');
    };
    stdin.on('data', onData);
  });
}
