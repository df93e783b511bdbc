package oidc

import (
	"crypto/sha256"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestTokenCacheLRUAndTTL(t *testing.T) {
	c := newTokenCache(TokenCacheConfig{Size: 2, MaxTTL: 10 * time.Second})
	now := time.Unix(1_700_000_000, 0)
	exp := now.Add(time.Hour)
	key := func(s string) [sha256.Size]byte { return cacheKey(s) }
	c.put(key("a"), &UserInfo{Username: "a"}, exp, now)
	c.put(key("b"), &UserInfo{Username: "b"}, exp, now)
	require.NotNil(t, c.get(key("a"), now), "a is now the most recently used")
	c.put(key("c"), &UserInfo{Username: "c"}, exp, now)
	require.Nil(t, c.get(key("b"), now), "b was the least recently used")
	require.Equal(t, "a", c.get(key("a"), now).Username)
	require.Equal(t, 2, c.len())

	require.NotNil(t, c.get(key("c"), now.Add(9*time.Second)))
	require.Nil(t, c.get(key("c"), now.Add(10*time.Second)), "MaxTTL after it was verified")
	require.Equal(t, 1, c.len(), "the expired entry is dropped")

	c.put(key("d"), &UserInfo{Username: "d"}, now.Add(time.Second), now)
	require.NotNil(t, c.get(key("d"), now.Add(time.Second)), "exp itself is still valid, as in Verify")
	require.Nil(t, c.get(key("d"), now.Add(time.Second+time.Nanosecond)))

	c.clear()
	require.Zero(t, c.len())
	require.Nil(t, c.get(key("a"), now))
	var off *tokenCache
	off.clear() // a nil cache is off
	require.Nil(t, newTokenCache(TokenCacheConfig{}))
}
