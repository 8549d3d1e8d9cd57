import { BadRequestError } from '../errors.js';
import type { NetmailGateway, NetmailRecipient } from '../mail/mail-service.js';
import { formatFtnAddress, parseFtnAddress } from './ftn-address.js';
import { FtnFormatError, quoteForError } from './ftn-format-error.js';
import type { FtnNetwork } from './ftn-networks.js';
import type { FtnStore } from './ftn-store.js';
import { MAX_NAME_BYTES } from './packet.js';

/**
 * `Name@zone:net/…`: a name, `@`, and something that starts like an address (digits and a
 * colon). Anything else — a username with an `@` in it included — is a username.
 */
const NETMAIL_TO = /^(.*?)@([0-9]+:.*)$/s;

function invalid(detail: string): BadRequestError {
  return new BadRequestError('mail.invalid-netmail-address', detail, [{ pointer: '/body/to', message: detail }]);
}

/**
 * Netmail from `POST /mail` (`to: "Name@21:1/100"`, or `Name@21:1/100@fsxnet` to name the
 * network): the recipient is read and checked here, the mail queued in the send's transaction,
 * and the scanner woken after the commit to pack it for the link that routes it.
 */
export function createNetmailGateway(deps: {
  networks: ReadonlyMap<string, FtnNetwork>;
  store: FtnStore;
  /** Called after a netmail's transaction committed. */
  onQueued: (network: string) => void;
}): NetmailGateway {
  const { networks, store } = deps;

  function networkFor(to: string, zone: number, domain: string | null): FtnNetwork {
    if (domain !== null) {
      const named = networks.get(domain);
      if (!named) throw invalid(`${quoteForError(to)}: this board is in no network named "${domain}"`);
      return named;
    }
    const inZone = [...networks.values()].filter((network) => network.address.zone === zone);
    if (inZone.length === 1 && inZone[0]) return inZone[0];
    if (inZone.length === 0) {
      throw invalid(
        networks.size === 0
          ? `${quoteForError(to)}: this board is in no FTN network, so it sends no netmail`
          : `${quoteForError(to)}: no network of this board is in zone ${zone}`,
      );
    }
    throw invalid(
      `${quoteForError(to)}: zone ${zone} is in several networks of this board (${inZone.map((network) => network.name).join(', ')}): add @network`,
    );
  }

  return {
    recipientOf(to) {
      const match = NETMAIL_TO.exec(to.trim());
      if (!match) return null;
      const [, rawName = '', addressText = ''] = match;
      const name = rawName.trim();
      if (name === '') throw invalid(`${quoteForError(to)}: the name before @ is empty`);
      if (Buffer.byteLength(name, 'utf8') > MAX_NAME_BYTES) {
        throw invalid(`${quoteForError(to)}: the name is longer than the ${MAX_NAME_BYTES} bytes netmail holds`);
      }
      let address: ReturnType<typeof parseFtnAddress>;
      try {
        address = parseFtnAddress(addressText);
      } catch (error) {
        if (error instanceof FtnFormatError) throw invalid(error.message);
        throw error;
      }
      const network = networkFor(to, address.zone, address.domain);
      const plain = formatFtnAddress({ ...address, domain: null });
      return { network: network.name, name, address: plain, display: `${name}@${plain}` };
    },

    async queue(trx, messageId, recipient: NetmailRecipient) {
      await store.queueNetmail(trx, {
        messageId,
        network: recipient.network,
        toAddress: recipient.address,
        toName: recipient.name,
      });
    },

    queued: (recipient) => deps.onQueued(recipient.network),
  };
}
