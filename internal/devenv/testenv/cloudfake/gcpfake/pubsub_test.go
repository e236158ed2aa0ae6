package gcpfake

import (
	"context"
	"crypto/tls"
	"testing"
	"time"

	pb "cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

func TestPubSubPublish(t *testing.T) {
	p := StartPubSub(t)
	p.AddTopic("weir-project", "flux")
	p.AddTopic("weir-project", "other")
	p.Accept("ya29.anywhere", "a@weir-project.iam.gserviceaccount.com")
	p.Accept("ya29.flux-only", "b@weir-project.iam.gserviceaccount.com", "projects/weir-project/topics/flux")
	conn, err := grpc.NewClient(p.Addr, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: p.tls.RootCAs, MinVersion: tls.VersionTLS12})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	client := pb.NewPublisherClient(conn)
	msg := &pb.PubsubMessage{Data: []byte(`{"reason":"ReconciliationSucceeded"}`), Attributes: map[string]string{"cluster": "prod-eu"}}

	tests := []struct {
		name     string
		token    string
		topic    string
		messages []*pb.PubsubMessage
		want     codes.Code
		bearer   string
	}{
		{name: "published", token: "ya29.anywhere", topic: "flux", messages: []*pb.PubsubMessage{msg}, want: codes.OK,
			bearer: "a@weir-project.iam.gserviceaccount.com"},
		{name: "no token", topic: "flux", messages: []*pb.PubsubMessage{msg}, want: codes.Unauthenticated},
		{name: "unknown token", token: "ya29.unknown", topic: "flux", messages: []*pb.PubsubMessage{msg}, want: codes.Unauthenticated},
		{name: "no such topic", token: "ya29.anywhere", topic: "missing", messages: []*pb.PubsubMessage{msg}, want: codes.NotFound,
			bearer: "a@weir-project.iam.gserviceaccount.com"},
		{name: "token for another topic", token: "ya29.flux-only", topic: "other", messages: []*pb.PubsubMessage{msg},
			want: codes.PermissionDenied, bearer: "b@weir-project.iam.gserviceaccount.com"},
		{name: "no messages", token: "ya29.anywhere", topic: "flux", want: codes.InvalidArgument,
			bearer: "a@weir-project.iam.gserviceaccount.com"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if tt.token != "" {
				ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tt.token)
			}
			before := len(p.Publishes())
			resp, err := client.Publish(ctx, &pb.PublishRequest{Topic: "projects/weir-project/topics/" + tt.topic, Messages: tt.messages})
			if got := status.Code(err); got != tt.want {
				t.Fatalf("code = %s (%v), want %s", got, err, tt.want)
			}
			if tt.want == codes.OK && len(resp.GetMessageIds()) != len(tt.messages) {
				t.Errorf("message ids %q for %d messages", resp.GetMessageIds(), len(tt.messages))
			}
			calls := p.Publishes()[before:]
			if len(calls) != 1 {
				t.Fatalf("%d calls recorded, want 1", len(calls))
			}
			want := Publish{Topic: "projects/weir-project/topics/" + tt.topic, Bearer: tt.bearer, Code: tt.want}
			for _, m := range tt.messages {
				want.Messages = append(want.Messages, Message{Data: m.GetData(), Attributes: m.GetAttributes()})
			}
			if d := cmp.Diff(want, calls[0]); d != "" {
				t.Errorf("recorded (-want +got):\n%s", d)
			}
		})
	}
}
