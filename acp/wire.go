package acp

import (
	"encoding/json"
	"strings"
)

// The ACP wire messages this agent reads and writes (protocol version 1),
// with the protocol's JSON field names.
//
// The fields of every struct that goes out are in the alphabetical order of
// their JSON names: the agent wrote maps before, which encoding/json writes
// with sorted keys, and the bytes on the wire stay the same.

// --- requests from the client ---

// initializeRequest is initialize's params.
type initializeRequest struct {
	ClientCapabilities *clientCapabilities `json:"clientCapabilities"`
	ClientInfo         *implementation     `json:"clientInfo"`
	ProtocolVersion    *int                `json:"protocolVersion"`
}

// clientCapabilities is the part of the client's capabilities the agent
// reads: whether it presents live notices (session.notices) and whether it
// offers the terminal/* methods (terminal).
type clientCapabilities struct {
	Session *struct {
		Notices json.RawMessage `json:"notices"`
	} `json:"session"`
	Terminal json.RawMessage `json:"terminal"`
}

// terminals reports whether the client advertised terminal: true (any
// other value is no).
func (c *clientCapabilities) terminals() bool {
	return c != nil && strings.TrimSpace(string(c.Terminal)) == "true"
}

// notices reports whether the client advertised session.notices ({} or any
// object; omitted and null mean unsupported).
func (c *clientCapabilities) notices() bool {
	if c == nil || c.Session == nil {
		return false
	}
	n := strings.TrimSpace(string(c.Session.Notices))
	return n != "" && n != "null"
}

// implementation names a client or an agent (clientInfo, agentInfo).
type implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// sessionPlace is what session/new and session/load share: the working
// directory and the client's MCP servers (each decoded on its own into an
// mcpServer, so that an error names its index).
type sessionPlace struct {
	Cwd        string            `json:"cwd"`
	McpServers []json.RawMessage `json:"mcpServers"`
}

// newSessionRequest is session/new's params.
type newSessionRequest = sessionPlace

// loadSessionRequest is session/load's and session/resume's params.
type loadSessionRequest struct {
	SessionID string `json:"sessionId"`
	sessionPlace
}

// listSessionsRequest is session/list's params.
type listSessionsRequest struct {
	Cursor string `json:"cursor"`
	Cwd    string `json:"cwd"`
}

// sessionRequest is the params of the requests that only name a session
// (session/close, session/delete, session/cancel).
type sessionRequest struct {
	SessionID string `json:"sessionId"`
}

// promptRequest is session/prompt's params; each block is decoded on its
// own into a promptBlock, so that an error names its index.
type promptRequest struct {
	Prompt    []json.RawMessage `json:"prompt"`
	SessionID string            `json:"sessionId"`
}

// setModeRequest is session/set_mode's params.
type setModeRequest struct {
	ModeID    string `json:"modeId"`
	SessionID string `json:"sessionId"`
}

// cancelRequestParams is $/cancel_request's params, read from the client
// (the id as raw JSON: a number or a string).
type cancelRequestParams struct {
	RequestID json.RawMessage `json:"requestId"`
}

// mcpServer is one of the client's MCP servers (McpServer: stdio, http, sse).
type mcpServer struct {
	Args    []string    `json:"args"`
	Command string      `json:"command"`
	Env     []nameValue `json:"env"`
	Headers []nameValue `json:"headers"`
	Name    string      `json:"name"`
	Type    string      `json:"type"`
	URL     string      `json:"url"`
}

// nameValue is an environment variable or an HTTP header of an mcpServer.
type nameValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// promptBlock is a content block of a prompt (ContentBlock: text, image,
// audio, resource_link, resource).
type promptBlock struct {
	Data     string            `json:"data"`
	MimeType string            `json:"mimeType"`
	Name     string            `json:"name"`
	Resource *embeddedResource `json:"resource"`
	Text     string            `json:"text"`
	Title    string            `json:"title"`
	Type     string            `json:"type"`
	URI      string            `json:"uri"`
}

// embeddedResource is a resource block's resource: text or a base64 blob.
type embeddedResource struct {
	Blob     *string `json:"blob"`
	MimeType string  `json:"mimeType"`
	Text     *string `json:"text"`
	URI      string  `json:"uri"`
}

// --- responses to the client ---

// initializeResponse is initialize's result.
type initializeResponse struct {
	AgentCapabilities agentCapabilities `json:"agentCapabilities"`
	AgentInfo         implementation    `json:"agentInfo"`
	AuthMethods       []authMethod      `json:"authMethods"`
	ProtocolVersion   int               `json:"protocolVersion"`
}

type agentCapabilities struct {
	LoadSession         bool                `json:"loadSession"`
	McpCapabilities     mcpCapabilities     `json:"mcpCapabilities"`
	PromptCapabilities  promptCapabilities  `json:"promptCapabilities"`
	SessionCapabilities sessionCapabilities `json:"sessionCapabilities"`
}

type mcpCapabilities struct {
	HTTP bool `json:"http"`
	SSE  bool `json:"sse"`
}

type promptCapabilities struct {
	Audio           bool `json:"audio"`
	EmbeddedContext bool `json:"embeddedContext"`
	Image           bool `json:"image"`
}

// sessionCapabilities: each supported optional method is an empty object.
type sessionCapabilities struct {
	Close  struct{} `json:"close"`
	Delete struct{} `json:"delete"`
	List   struct{} `json:"list"`
	Resume struct{} `json:"resume"`
}

// authMethod is an authentication method: Foya needs none itself; each MCP
// server that needs an OAuth sign-in is one (auth.go).
type authMethod struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// newSessionResponse is session/new's result.
type newSessionResponse struct {
	Modes     modeState `json:"modes"`
	SessionID string    `json:"sessionId"`
}

// loadSessionResponse is session/load's and session/resume's result.
type loadSessionResponse struct {
	Modes modeState `json:"modes"`
}

// modeState is a session's current mode and the modes it can switch to.
type modeState struct {
	AvailableModes []sessionMode `json:"availableModes"`
	CurrentModeID  string        `json:"currentModeId"`
}

type sessionMode struct {
	Description string `json:"description"`
	ID          string `json:"id"`
	Name        string `json:"name"`
}

// listSessionsResponse is session/list's result.
type listSessionsResponse struct {
	Sessions []sessionInfo `json:"sessions"`
	// NextCursor continues the list (the last listed session's id); empty
	// at its end.
	NextCursor string `json:"nextCursor,omitempty"`
}

type sessionInfo struct {
	Cwd       string `json:"cwd"`
	SessionID string `json:"sessionId"`
	Title     string `json:"title,omitempty"`
	UpdatedAt string `json:"updatedAt,omitempty"`
}

// promptResponse is session/prompt's result.
type promptResponse struct {
	StopReason string `json:"stopReason"`
}

// empty is the result of the requests that answer nothing: {}.
type empty struct{}

// --- notifications and requests to the client ---

// sessionNotification is session/update's params; update is one of the
// *Update types below.
type sessionNotification struct {
	SessionID string `json:"sessionId"`
	Update    any    `json:"update"`
}

// contentChunk is a user_message_chunk, agent_message_chunk or
// agent_thought_chunk update.
type contentChunk struct {
	Content       contentBlock `json:"content"`
	SessionUpdate string       `json:"sessionUpdate"`
}

// contentBlock is a content block the agent sends: a textContent or a
// resourceLinkContent.
type contentBlock interface{ contentBlock() }

type textContent struct {
	Text string `json:"text"`
	Type string `json:"type"` // "text"
}

type resourceLinkContent struct {
	MimeType string `json:"mimeType"`
	Name     string `json:"name"`
	Type     string `json:"type"` // "resource_link"
	URI      string `json:"uri"`
}

// imageContent is an image content block: base64 bytes and their type.
type imageContent struct {
	Data     string `json:"data"`
	MimeType string `json:"mimeType"`
	Type     string `json:"type"` // "image"
}

func (textContent) contentBlock()         {}
func (resourceLinkContent) contentBlock() {}
func (imageContent) contentBlock()        {}

func textBlock(t string) textContent { return textContent{Text: t, Type: "text"} }

// toolCall is a tool_call update (SessionUpdate "tool_call") and the
// toolCall of a permission request (SessionUpdate empty).
type toolCall struct {
	Kind          string             `json:"kind"`
	Locations     []toolCallLocation `json:"locations,omitempty"`
	RawInput      json.RawMessage    `json:"rawInput,omitempty"`
	SessionUpdate string             `json:"sessionUpdate,omitempty"`
	Status        string             `json:"status"`
	Title         string             `json:"title"`
	ToolCallID    string             `json:"toolCallId"`
}

type toolCallLocation struct {
	Path string `json:"path"`
}

// toolCallUpdate is a tool_call_update update: a status change, or the
// result (Content, never nil then, and RawOutput when the tool said something).
type toolCallUpdate struct {
	Content       []toolCallContent `json:"content,omitzero"`
	RawOutput     *rawOutput        `json:"rawOutput,omitempty"`
	SessionUpdate string            `json:"sessionUpdate"` // "tool_call_update"
	Status        string            `json:"status"`
	ToolCallID    string            `json:"toolCallId"`
}

type rawOutput struct {
	IsError bool   `json:"isError"`
	Output  string `json:"output"`
}

// toolCallContent is a tool call's content: a diffContent or a wrappedContent.
type toolCallContent interface{ toolCallContent() }

// diffContent is a file's change; OldText is null for a created file.
type diffContent struct {
	NewText string  `json:"newText"`
	OldText *string `json:"oldText"`
	Path    string  `json:"path"`
	Type    string  `json:"type"` // "diff"
}

// wrappedContent is a content block in a tool call's content.
type wrappedContent struct {
	Content contentBlock `json:"content"`
	Type    string       `json:"type"` // "content"
}

func (diffContent) toolCallContent()    {}
func (wrappedContent) toolCallContent() {}

// planUpdate is a plan update: the whole task list.
type planUpdate struct {
	Entries       []planEntry `json:"entries"`
	SessionUpdate string      `json:"sessionUpdate"` // "plan"
}

type planEntry struct {
	Content  string `json:"content"`
	Priority string `json:"priority"`
	Status   string `json:"status"`
}

// availableCommandsUpdate is an available_commands_update update: the
// slash commands a prompt may start with.
type availableCommandsUpdate struct {
	AvailableCommands []availableCommand `json:"availableCommands"`
	SessionUpdate     string             `json:"sessionUpdate"` // "available_commands_update"
}

type availableCommand struct {
	Description string        `json:"description"`
	Input       *commandInput `json:"input,omitempty"`
	Name        string        `json:"name"`
}

// commandInput is an unstructured command input: the text after the name.
type commandInput struct {
	Hint string `json:"hint"`
}

// noticeUpdate is a notice update: live information for the person, sent
// only to a client that advertised session.notices.
type noticeUpdate struct {
	Description   string `json:"description,omitempty"`
	SessionUpdate string `json:"sessionUpdate"` // "notice"
	Severity      string `json:"severity"`      // info, warning or error
	Title         string `json:"title"`
}

// currentModeUpdate is a current_mode_update update.
type currentModeUpdate struct {
	CurrentModeID string `json:"currentModeId"`
	SessionUpdate string `json:"sessionUpdate"` // "current_mode_update"
}

// permissionRequest is session/request_permission's params.
type permissionRequest struct {
	Options   []permissionOption `json:"options"`
	SessionID string             `json:"sessionId"`
	ToolCall  toolCall           `json:"toolCall"`
}

type permissionOption struct {
	Kind     string `json:"kind"`
	Name     string `json:"name"`
	OptionID string `json:"optionId"`
}

// permissionResponse is session/request_permission's result.
type permissionResponse struct {
	Outcome struct {
		OptionID string `json:"optionId"`
		Outcome  string `json:"outcome"` // "selected" or "cancelled"
	} `json:"outcome"`
}

// cancelRequest is the $/cancel_request the agent sends to withdraw its
// own request.
type cancelRequest struct {
	RequestID int64 `json:"requestId"`
}
