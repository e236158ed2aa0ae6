package eventhubfake

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azeventhubs/v2"
)

const (
	testKeyName = "RootManageSharedAccessKey"
	testKey     = "c2VjcmV0LWtleS1vZi10aGUtZmFrZQ=="
)

// send publishes body to hub with the connection string conn.
func send(t *testing.T, s *Server, conn, hub, body string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	pc, err := azeventhubs.NewProducerClientFromConnectionString(conn, hub, &azeventhubs.ProducerClientOptions{
		TLSConfig: s.ClientTLS(), RetryOptions: azeventhubs.RetryOptions{MaxRetries: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = pc.Close(ctx) }()
	batch, err := pc.NewEventDataBatch(ctx, nil)
	if err != nil {
		return err
	}
	if err := batch.AddEventData(&azeventhubs.EventData{Body: []byte(body)}, nil); err != nil {
		t.Fatal(err)
	}
	return pc.SendEventDataBatch(ctx, batch, nil)
}

func TestSDKPublishesWithSAS(t *testing.T) {
	s := Start(t, Credentials{KeyName: testKeyName, Key: testKey})
	conn := "Endpoint=sb://" + s.Addr + "/;SharedAccessKeyName=" + testKeyName + ";SharedAccessKey=" + testKey
	if err := send(t, s, conn, "flux", `{"a":1}`); err != nil {
		t.Fatalf("send: %v", err)
	}
	msgs := s.Messages()
	if len(msgs) != 1 || msgs[0].Hub != "flux" || string(msgs[0].Data) != `{"a":1}` {
		t.Fatalf("messages = %+v", msgs)
	}
	tokens := s.Tokens()
	want := PutToken{Type: TokenTypeSAS, Audience: "amqps://" + s.Addr + "/flux", KeyName: testKeyName, Status: 202}
	if len(tokens) != 1 || tokens[0] != want {
		t.Fatalf("tokens = %+v, want [%+v]", tokens, want)
	}
}

func TestSDKRefusedWithWrongKey(t *testing.T) {
	s := Start(t, Credentials{KeyName: testKeyName, Key: testKey})
	conn := "Endpoint=sb://" + s.Addr + "/;SharedAccessKeyName=" + testKeyName + ";SharedAccessKey=d3Jvbmc="
	err := send(t, s, conn, "flux", "x")
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("send = %v, want a 401", err)
	}
	if n := len(s.Messages()); n != 0 {
		t.Fatalf("%d messages received with a wrong key", n)
	}
	if tokens := s.Tokens(); len(tokens) == 0 || tokens[0].Status != 401 {
		t.Fatalf("tokens = %+v, want a 401", tokens)
	}
}
