package gitcomment

import (
	"context"
	"fmt"
	"strings"

	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

// listed is how many comments are read, oldest first: one page of 100,
// the most a page holds on each host, as Flux reads. The comment is
// written when the request is new, so it is on the first page.
const listed = 100

// comment is one comment of a pull or merge request.
type comment struct {
	id           int64
	author, body string
}

// thread is the comments of one host's pull or merge requests.
type thread interface {
	// login is the name the host shows as the author of what the client
	// posts.
	login(ctx context.Context) (string, error)
	// list returns the first comments of request n, oldest first.
	list(ctx context.Context, n int64) ([]comment, error)
	create(ctx context.Context, n int64, body string) error
	edit(ctx context.Context, n, id int64, body string) error
	// secrets are the credentials the client sent.
	secrets() []string
}

// commenter is the Notifier of the comment types: Flux's steps, the
// host's API behind thread.
type commenter struct {
	kind, prefix, providerUID string
	thread                    thread
}

func newCommenter(o notifier.Options, prefix string, newThread func(notifier.Options) (thread, error)) (*commenter, error) {
	if o.ProviderUID == "" {
		return nil, fmt.Errorf("%w: %s provider has no UID to mark its comments with", notifier.ErrInvalidConfig, o.Type)
	}
	t, err := newThread(o)
	if err != nil {
		return nil, err
	}
	return &commenter{kind: o.Type, prefix: prefix, providerUID: o.ProviderUID, thread: t}, nil
}

// Post writes e's comment on the request it names, editing the object's
// comment when there is one.
func (c *commenter) Post(ctx context.Context, e events.Event) error {
	err := c.post(ctx, e)
	return notifier.Scrub(err, c.thread.secrets())
}

func (c *commenter) post(ctx context.Context, e events.Event) error {
	if commitStatusUpdateEvent(e) {
		return nil
	}
	n, err := requestNumber(e)
	if err != nil {
		return err
	}
	text := body(c.prefix, c.providerUID, e)
	me, err := c.thread.login(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", c.kind, err)
	}
	comments, err := c.thread.list(ctx, n)
	if err != nil {
		return fmt.Errorf("%s: listing the comments of #%d: %w", c.kind, n, err)
	}
	mark := marker(c.prefix, c.providerUID, e)
	for _, cm := range comments {
		if cm.author == me && strings.Contains(cm.body, mark) {
			if err := c.thread.edit(ctx, n, cm.id, text); err != nil {
				return fmt.Errorf("%s: updating comment %d of #%d: %w", c.kind, cm.id, n, err)
			}
			return nil
		}
	}
	if err := c.thread.create(ctx, n, text); err != nil {
		return fmt.Errorf("%s: commenting on #%d: %w", c.kind, n, err)
	}
	return nil
}
