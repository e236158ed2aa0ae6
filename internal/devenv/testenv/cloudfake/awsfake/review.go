package awsfake

import (
	"context"
	"errors"
	"slices"

	authnv1 "k8s.io/api/authentication/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TokenReview is a ReviewWebIdentity that asks the API server behind c
// whether a token is a ServiceAccount's for audience (as IAM's OIDC
// provider checks an EKS cluster's tokens), and names its user.
func TokenReview(c client.Client, audience string) func(string) (string, error) {
	return func(token string) (string, error) {
		r := &authnv1.TokenReview{Spec: authnv1.TokenReviewSpec{Token: token, Audiences: []string{audience}}}
		if err := c.Create(context.Background(), r); err != nil {
			return "", err
		}
		if !r.Status.Authenticated || !slices.Contains(r.Status.Audiences, audience) {
			return "", errors.New("couldn't verify the web identity token")
		}
		return r.Status.User.Username, nil
	}
}
