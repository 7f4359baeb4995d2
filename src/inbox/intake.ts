// Reads one SMTP DATA stream into a parsed message within the size and header-section bounds.
// Past a bound nothing more is kept: the parser is dropped and the rest of the stream is read and
// discarded, so the refusal can be answered after the final dot without buffering the message.
import { simpleParser, type ParsedMail, type SimpleParserOptions } from 'mailparser';
import { PassThrough } from 'node:stream';
import type { SMTPServerDataStream } from 'smtp-server';

/** A refusal the listener sends as the SMTP reply (the text carries the enhanced status code). */
export class SmtpReply extends Error {
  constructor(
    readonly responseCode: number,
    message: string,
  ) {
    super(message);
  }
}

export interface IntakeBounds {
  /** The whole message, as smtp-server counts it (its `size` option sets `stream.sizeExceeded`). */
  maxBytes: number;
  /** A header section (the message's, up to and including the blank line that ends it, and each MIME part's). */
  maxHeaderBytes: number;
}

const LF = 0x0a;
const CR = 0x0d;

/** Finds where the header section ends, across chunks, and how long it has been so far. */
class HeaderSection {
  bytes = 0;
  ended = false;
  /** Whether the current line has had nothing but CR yet (a message may start with the blank line). */
  private lineEmpty = true;

  /** Counts the header bytes in a chunk; false once the section is longer than `max` without ending. */
  scan(chunk: Buffer, max: number): boolean {
    for (let i = 0; i < chunk.length && !this.ended; i++) {
      this.bytes++;
      const b = chunk[i];
      if (b === LF) {
        if (this.lineEmpty) this.ended = true;
        this.lineEmpty = true;
      } else if (b !== CR) this.lineEmpty = false;
      if (!this.ended && this.bytes > max) return false;
    }
    return true;
  }
}

/**
 * The parsed message, or an SmtpReply as soon as it is refused: 552 over a bound, 554 when the
 * parser cannot read it (both permanent, so a sender does not retry what cannot succeed). The
 * stream keeps flowing after a refusal; smtp-server sends the reply once it ends.
 */
export function readMessage(stream: SMTPServerDataStream, bounds: IntakeBounds): Promise<ParsedMail> {
  return new Promise((resolve, reject) => {
    const parserInput = new PassThrough();
    const header = new HeaderSection();
    let refused = false;
    const refuse = (reply: SmtpReply) => {
      if (refused) return;
      refused = true;
      // Destroying with an error makes simpleParser drop its parser and what it held.
      parserInput.destroy(reply);
      stream.resume();
      reject(reply);
    };
    // mailparser hands its options to mailsplit, whose maxHeadSize bounds each MIME part's header
    // section (1 MiB unless set): the parts get the same bound as the message.
    const options: SimpleParserOptions & { maxHeadSize: number } = {
      skipHtmlToText: false,
      skipTextToHtml: true,
      skipImageLinks: true,
      maxHeadSize: bounds.maxHeaderBytes,
    };
    simpleParser(parserInput, options).then(
      (mail) => {
        if (!refused) resolve(mail);
      },
      (err: unknown) => refuse(new SmtpReply(554, `5.6.0 Message could not be read: ${err instanceof Error ? err.message : String(err)}`)),
    );
    stream.on('data', (chunk: Buffer) => {
      if (refused) return;
      if (stream.sizeExceeded) return refuse(new SmtpReply(552, `5.3.4 Message too large: the limit is ${bounds.maxBytes} bytes`));
      if (!header.ended && !header.scan(chunk, bounds.maxHeaderBytes))
        return refuse(new SmtpReply(552, `5.3.4 Header section too large: the limit is ${bounds.maxHeaderBytes} bytes`));
      if (!parserInput.write(chunk)) {
        stream.pause();
        parserInput.once('drain', () => stream.resume());
      }
    });
    stream.once('end', () => {
      if (!refused) parserInput.end();
    });
  });
}
