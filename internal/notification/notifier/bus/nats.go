package bus

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

// natsClientName is the connection name the NATS server lists for the
// publisher; Flux's.
const natsClientName = "NATS Provider Publisher"

// natsConnectTimeout bounds the connection when the context carries no
// deadline; the event server's always does.
const natsConnectTimeout = 15 * time.Second

// natsPublisher publishes events on one subject: address is the server
// URL (a comma-separated list is a cluster), channel the subject.
type natsPublisher struct {
	opts notifier.Options
}

func newNATS(o notifier.Options) (notifier.Notifier, error) {
	if err := need(o, "an address (the NATS server URL)", o.Address); err != nil {
		return nil, err
	}
	if err := need(o, "a channel (the subject)", o.Channel); err != nil {
		return nil, err
	}
	return &natsPublisher{opts: o}, nil
}

// Post connects, publishes and waits for the server's answer to a ping,
// so that a refused publish (a permission the user lacks) is seen before
// the connection is closed.
func (n *natsPublisher) Post(ctx context.Context, e events.Event) error {
	return notifier.Scrub(n.post(ctx, e), secrets(n.opts))
}

func (n *natsPublisher) post(ctx context.Context, e events.Event) error {
	body, err := payload(e)
	if err != nil {
		return err
	}
	timeout := natsConnectTimeout
	if d, ok := ctx.Deadline(); ok {
		timeout = time.Until(d)
	} else {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	opts := []nats.Option{
		nats.Name(natsClientName), nats.Timeout(timeout), nats.NoReconnect(),
		// Errors are read with LastError once the publish is flushed; the
		// default handler would print them on stderr.
		nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}),
	}
	// As Flux: credentials only when both are set.
	if n.opts.Username != "" && n.opts.Password != "" {
		opts = append(opts, nats.UserInfo(n.opts.Username, n.opts.Password))
	}
	nc, err := nats.Connect(n.opts.Address, opts...)
	if err != nil {
		return fmt.Errorf("connecting to NATS: %w", err)
	}
	defer nc.Close()
	if err := nc.Publish(n.opts.Channel, body); err != nil {
		return fmt.Errorf("publishing to NATS subject %s: %w", n.opts.Channel, err)
	}
	if err := nc.FlushWithContext(ctx); err != nil {
		return fmt.Errorf("publishing to NATS subject %s: %w", n.opts.Channel, err)
	}
	if err := nc.LastError(); err != nil {
		return fmt.Errorf("publishing to NATS subject %s: %w", n.opts.Channel, err)
	}
	return nil
}
