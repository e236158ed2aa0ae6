// Package chat posts events to chat services, each with the request its
// API documents: msteams (an Adaptive Card for Workflows webhooks, the
// legacy MessageCard for Office 365 connectors), googlechat (a card
// message), webex (a Markdown message to a room), telegram (sendMessage
// with MarkdownV2), matrix (an m.room.message event), lark (an
// interactive card), zulip (a stream message, form-encoded, to
// "<channel>/<topic>") and zoom (an incoming webhook's rich message).
//
// Every message says the same: the object as "<kind>/<name>.<namespace>",
// the event's message, and its metadata (with the Alert's summary) as
// facts sorted by key.
package chat
