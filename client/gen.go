package client

//go:generate go tool genqlient
