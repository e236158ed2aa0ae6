package bus

import (
	"context"
	"net"
	"path/filepath"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/notification/notifier/notifiertest"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

// startNATS runs a real NATS server on 127.0.0.1 with two users: flux,
// who may publish on flux.> only, and reader, who may read everything.
func startNATS(t *testing.T) *natsserver.Server {
	t.Helper()
	s, err := natsserver.NewServer(&natsserver.Options{
		Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true,
		Users: []*natsserver.User{
			{Username: "flux", Password: password, Permissions: &natsserver.Permissions{
				Publish: &natsserver.SubjectPermission{Allow: []string{"flux.>"}},
			}},
			{Username: "reader", Password: "reader-pw"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(s.Shutdown)
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	return s
}

func subscribe(t *testing.T, s *natsserver.Server, subject string) *nats.Subscription {
	t.Helper()
	nc, err := nats.Connect(s.ClientURL(), nats.UserInfo("reader", "reader-pw"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	sub, err := nc.SubscribeSync(subject)
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return sub
}

func TestNATSPublishesTheEvent(t *testing.T) {
	s := startNATS(t)
	sub := subscribe(t, s, "flux.events")
	n, err := New(notifier.Options{Type: "nats", Address: s.ClientURL(), Channel: "flux.events",
		Username: "flux", Password: password})
	if err != nil {
		t.Fatal(err)
	}
	e := sampleEvent(events.SeverityInfo)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	if err := n.Post(ctx, e); err != nil {
		t.Fatalf("Post() = %v", err)
	}
	t.Logf("connect, publish, flush and close took %s", time.Since(start))
	msg, err := sub.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatalf("no message on flux.events: %v", err)
	}
	if len(msg.Header) != 0 {
		t.Errorf("message headers = %v, want none", msg.Header)
	}
	assertEventJSON(t, msg.Data, e)
	notifiertest.Golden(t, filepath.Join("testdata", "nats.json"), msg.Data, "http://fake", *update)
}

func TestNATSReportsRefusals(t *testing.T) {
	s := startNATS(t)
	closed := closedPort(t)
	tests := []struct {
		name string
		opts notifier.Options
		want string
	}{
		{name: "wrong password", want: "Authorization Violation",
			opts: notifier.Options{Address: s.ClientURL(), Channel: "flux.events", Username: "flux", Password: password + "-wrong"}},
		{name: "no credentials", want: "Authorization Violation",
			opts: notifier.Options{Address: s.ClientURL(), Channel: "flux.events"}},
		{name: "subject not allowed", want: "permissions violation",
			opts: notifier.Options{Address: s.ClientURL(), Channel: "ops.events", Username: "flux", Password: password}},
		{name: "password in the address", want: "Authorization Violation",
			opts: notifier.Options{Address: "nats://flux:" + password + "-x@" + s.Addr().String(), Channel: "flux.events"}},
		{name: "unreachable", want: "connecting to NATS",
			opts: notifier.Options{Address: "nats://" + closed, Channel: "flux.events", Username: "flux", Password: password}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Type = "nats"
			n, err := New(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			err = n.Post(ctx, sampleEvent(events.SeverityError))
			assertMentions(t, err, tt.want)
		})
	}
}

// closedPort is an address on 127.0.0.1 nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}
