"""Playing by replying: a move sent as an answer to the email that asks for it.

Every email that asks a player for a move replies to an address of its own,
``REPLY_ADDRESS`` with a signed tag (:mod:`.tags`); every email of a game
threads with the player's first email of it (:mod:`.headers`). A reply that
comes back is read (:mod:`.reading`, pure) and applied through the game
service like a move on the page, and answered through the outbox
(:mod:`.inbound`). ``flask mail inbound`` (LMTP or SMTP) and ``flask mail
fetch`` (IMAP) hand each message to :func:`.inbound.receive` (:mod:`.servers`).
"""
