package gitcomment

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/go-github/v75/github"

	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/notification/notifier/githost"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

// dispatch fires a repository_dispatch event for each event it gets.
type dispatch struct {
	gh *githost.GitHub
}

func newDispatch(o notifier.Options) (*dispatch, error) {
	g, err := githost.NewGitHub(o)
	if err != nil {
		return nil, err
	}
	return &dispatch{gh: g}, nil
}

// Post sends e as a repository_dispatch event: the event type names the
// object as "<Kind>/<name>.<namespace>" (a workflow's `on.repository_dispatch.types`
// selects on it), and the client payload is the event as Flux encodes it.
func (d *dispatch) Post(ctx context.Context, e events.Event) error {
	if commitStatusUpdateEvent(e) {
		return nil
	}
	o := e.InvolvedObject
	// Flux's timestamp is a metav1.Time: seconds, UTC; its metadata
	// lost the event group's prefix.
	e.Timestamp = e.Timestamp.UTC().Truncate(time.Second)
	e.Metadata = fluxMetadata(e)
	payload, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encoding the event: %w", err)
	}
	raw := json.RawMessage(payload)
	_, _, err = d.gh.Client.Repositories.Dispatch(ctx, d.gh.Owner, d.gh.Repo, github.DispatchRequestOptions{
		EventType: o.Kind + "/" + o.Name + "." + o.Namespace, ClientPayload: &raw,
	})
	if err != nil {
		err = fmt.Errorf("githubdispatch: sending the repository dispatch event: %w", err)
	}
	return notifier.Scrub(err, d.gh.Secrets())
}
