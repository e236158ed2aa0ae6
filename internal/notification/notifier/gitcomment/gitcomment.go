package gitcomment

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	notificationv1beta3 "github.com/weir-gitops/weir/api/notification/v1beta3"
	"github.com/weir-gitops/weir/internal/notification/notifier"
	"github.com/weir-gitops/weir/internal/runtime/events"
)

// Types are the Provider types this package delivers to.
var Types = []string{
	notificationv1beta3.GitHubDispatchProvider,
	notificationv1beta3.GitHubPullRequestCommentProvider,
	notificationv1beta3.GitLabMergeRequestCommentProvider,
	notificationv1beta3.GiteaPullRequestCommentProvider,
}

// Metadata keys, Flux's. A Flux controller sends an object's
// event.toolkit.fluxcd.io/ annotations with their prefix, weir's without.
const (
	eventGroupPrefix   = "event.toolkit.fluxcd.io/"
	changeRequestKey   = "change_request"
	commitStatusKey    = "commit_status"
	commitStatusUpdate = "update"
)

// IsChangeRequestType reports whether kind comments on pull or merge
// requests.
func IsChangeRequestType(kind string) bool {
	return slices.Contains(Types, kind) && kind != notificationv1beta3.GitHubDispatchProvider
}

// Skip says why an event is not for kind, or "" when it is: a comment
// needs the change request the event names (loud: Flux logs those drops).
// The event server drops the events that set commit statuses for every
// type but the commit-status ones before it asks.
func Skip(kind string, e events.Event) (why string, loud bool) {
	if IsChangeRequestType(kind) && changeRequest(e) == "" {
		return "missing " + changeRequestKey + " metadata key", true
	}
	return "", false
}

// commitStatusUpdateEvent reports whether e is the one that sets a
// commit status when a reconciliation ends.
func commitStatusUpdateEvent(e events.Event) bool {
	return e.Metadata[commitStatusKey] == commitStatusUpdate || e.Metadata[eventGroupPrefix+commitStatusKey] == commitStatusUpdate
}

// changeRequest is the number of the pull or merge request e names.
func changeRequest(e events.Event) string {
	if v := e.Metadata[eventGroupPrefix+changeRequestKey]; v != "" {
		return v
	}
	return e.Metadata[changeRequestKey]
}

// requestNumber parses the change request's number.
func requestNumber(e events.Event) (int64, error) {
	v := changeRequest(e)
	if v == "" {
		return 0, fmt.Errorf("missing %q metadata key", changeRequestKey)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("invalid %q metadata value %q: not a pull or merge request number", changeRequestKey, v)
	}
	return n, nil
}

// New returns the Notifier of one of Types.
func New(o notifier.Options) (notifier.Notifier, error) {
	switch o.Type {
	case notificationv1beta3.GitHubDispatchProvider:
		return newDispatch(o)
	case notificationv1beta3.GitHubPullRequestCommentProvider:
		return newCommenter(o, prMarker, newGitHubThread)
	case notificationv1beta3.GitLabMergeRequestCommentProvider:
		return newCommenter(o, mrMarker, newGitLabThread)
	case notificationv1beta3.GiteaPullRequestCommentProvider:
		return newCommenter(o, prMarker, newGiteaThread)
	default:
		return nil, fmt.Errorf("%w: %q is not a dispatch or change request comment type", notifier.ErrInvalidConfig, o.Type)
	}
}

// CheckAddress reports whether address names a repository kind can post
// to: the check New makes, without credentials, for `weir create
// alert-provider`.
func CheckAddress(kind, address string) error {
	_, err := New(notifier.Options{Type: kind, Address: address, Token: "check", ProviderUID: "check"})
	return err
}
