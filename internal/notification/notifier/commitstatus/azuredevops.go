package commitstatus

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	authazure "github.com/weir-gitops/weir/internal/auth/azure"
	"github.com/weir-gitops/weir/internal/notification/notifier"
)

// azureGenre is the genre of the statuses Flux sets on Azure DevOps.
const azureGenre = "fluxcd"

// azureAPIVersion is the Git statuses API version asked for.
const azureAPIVersion = "6.0"

// azureDevOps sets Git commit statuses on Azure DevOps. The address is
// https://dev.azure.com/ORG/PROJECT/_git/REPO; the personal access token
// goes as the password of basic auth with an empty user. Without one, an
// Entra token of the Provider's cloud identity for Azure DevOps goes
// there instead, as Flux sends it (workload identity).
type azureDevOps struct {
	api  apiClient
	base string
	// identity, when the Secret has no token, gives one, fetched on the
	// delivery's first call into token.
	identity notifier.CloudIdentity
	token    string
}

// authorize fetches the identity's token unless there is one.
func (a *azureDevOps) authorize(ctx context.Context) error {
	if a.token != "" {
		return nil
	}
	t, err := a.identity.AzureToken(ctx, authazure.ScopeDevOps)
	if err != nil {
		return fmt.Errorf("getting an Entra token for Azure DevOps: %w", err)
	}
	a.token = t.Value
	return nil
}

type azureStatus struct {
	State       string       `json:"state"`
	Description string       `json:"description"`
	Context     azureContext `json:"context"`
}

type azureContext struct {
	Name  string `json:"name"`
	Genre string `json:"genre"`
}

func newAzureDevOps(o notifier.Options) (host, error) {
	// As in Flux, the Secret's token wins over the identity.
	if o.Identity == nil {
		if err := requireToken(o); err != nil {
			return nil, err
		}
	}
	a, err := parseAddress(o.Address)
	if err != nil {
		return nil, err
	}
	parts := strings.Split(a.path, "/")
	if len(parts) != 4 || parts[2] != "_git" || parts[0] == "" || parts[1] == "" || parts[3] == "" {
		return nil, fmt.Errorf("%w: azuredevops address must be https://dev.azure.com/<org>/<project>/_git/<repo>, got path %q",
			notifier.ErrInvalidConfig, a.path)
	}
	d := &azureDevOps{identity: o.Identity, token: o.Token,
		base: fmt.Sprintf("%s/%s/%s/_apis/git/repositories/%s", a.origin,
			url.PathEscape(parts[0]), url.PathEscape(parts[1]), url.PathEscape(parts[3]))}
	d.api = apiClient{http: o.HTTPClient, auth: func(r *http.Request) { r.SetBasicAuth("", d.token) }}
	return d, nil
}

func (*azureDevOps) states() (string, string) { return "succeeded", "error" }

func (a *azureDevOps) statusesURL(sha string, query string) string {
	return a.base + "/commits/" + sha + "/statuses?api-version=" + azureAPIVersion + query
}

// latest asks for the last status of each context (latestOnly).
func (a *azureDevOps) latest(ctx context.Context, sha, key string) (status, bool, error) {
	if err := a.authorize(ctx); err != nil {
		return status{}, false, err
	}
	var got struct {
		Value []azureStatus `json:"value"`
	}
	if err := a.api.do(ctx, http.MethodGet, a.statusesURL(sha, "&latestOnly=true"), "listing statuses", nil, &got); err != nil {
		return status{}, false, err
	}
	for _, s := range got.Value {
		if s.Context.Genre == azureGenre && s.Context.Name == key {
			return status{key: key, state: s.State, description: s.Description}, true, nil
		}
	}
	return status{}, false, nil
}

func (a *azureDevOps) set(ctx context.Context, sha string, s status) error {
	if err := a.authorize(ctx); err != nil {
		return err
	}
	return a.api.do(ctx, http.MethodPost, a.statusesURL(sha, ""), "posting status", azureStatus{
		State: s.state, Description: s.description, Context: azureContext{Name: s.key, Genre: azureGenre},
	}, nil)
}
