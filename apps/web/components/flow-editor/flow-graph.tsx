"use client";
import dagre from "@dagrejs/dagre";
import {
  Controls,
  Handle,
  Position,
  ReactFlow,
  ReactFlowProvider,
  useReactFlow,
  useStoreApi,
  type Edge,
  type Node,
  type NodeProps,
} from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import { CircleAlert, GitBranch, Repeat, SquareCode, FileCode2, ArrowRight, CirclePause } from "lucide-react";
import { createContext, useContext, useEffect, useMemo } from "react";
import { usePageTheme } from "@/lib/page-theme";
import { cn } from "@/lib/utils";
import { childLists, KIND_LABEL, stepLabel, type FlowModule, type FlowValue, type ListPath } from "./model";

/** A step's state in a run: what its node's colour says. */
export type StepRunStatus =
  "waiting" | "queued" | "running" | "suspended" | "success" | "failure" | "skipped" | "canceled";

/** What a click on the graph selected: a step, the flow's input or result, or an empty step list. */
export type GraphSelection =
  | { kind: "step"; id: string }
  | { kind: "input" }
  | { kind: "result" }
  | { kind: "lane"; path: ListPath; label: string };

interface GraphContextValue {
  selected: GraphSelection | null;
  onSelect?: (selection: GraphSelection) => void;
  statuses?: Record<string, StepRunStatus>;
  errors?: Record<string, string>;
}

const GraphContext = createContext<GraphContextValue>({ selected: null });

type StepData = { module: FlowModule; container: boolean };
type LaneData = { path: ListPath; label: string };
type LabelData = { label: string };

const SIZES = {
  step: { width: 230, height: 58 },
  io: { width: 150, height: 40 },
  end: { width: 130, height: 30 },
  lane: { width: 190, height: 44 },
} as const;

const STATUS_STYLE: Record<StepRunStatus, string> = {
  waiting: "border-line bg-panel",
  queued: "border-warn bg-warn-bg",
  running: "border-accent bg-panel ring-2 ring-accent/40",
  suspended: "border-warn bg-warn-bg ring-2 ring-warn/40",
  success: "border-ok bg-ok-bg",
  failure: "border-bad bg-bad-bg",
  canceled: "border-bad bg-bad-bg",
  skipped: "border-dashed border-line bg-hover",
};

function kindIcon(module: FlowModule) {
  switch (module.value.type) {
    case "rawscript":
      return SquareCode;
    case "script":
    case "flow":
      return FileCode2;
    case "branchone":
    case "branchall":
      return GitBranch;
    case "forloopflow":
    case "whileloopflow":
      return Repeat;
    default:
      return ArrowRight;
  }
}

function Handles() {
  return (
    <>
      <Handle type="target" position={Position.Top} isConnectable={false} className="!opacity-0" />
      <Handle type="source" position={Position.Bottom} isConnectable={false} className="!opacity-0" />
    </>
  );
}

function StepNode({ data }: NodeProps<Node<StepData>>) {
  const { selected, onSelect, statuses, errors } = useContext(GraphContext);
  const module = data.module;
  const status = statuses ? (statuses[module.id] ?? "waiting") : undefined;
  const error = errors?.[module.id];
  const isSelected = selected?.kind === "step" && selected.id === module.id;
  const Icon = kindIcon(module);
  return (
    <div
      className={cn(
        "flex h-full w-full items-stretch rounded-md border-2 text-left text-fg shadow-sm",
        status ? STATUS_STYLE[status] : "border-line bg-panel",
        error && "border-bad",
        isSelected && "outline-2 outline-offset-2 outline-accent",
      )}
      data-testid="flow-node"
      data-step={module.id}
      data-status={status}
    >
      <Handles />
      <button
        type="button"
        className="flex min-w-0 flex-1 items-center gap-2 rounded-md border-0 bg-transparent px-2 py-1 text-left text-fg"
        aria-pressed={isSelected}
        onClick={() => onSelect?.({ kind: "step", id: module.id })}
      >
        <Icon aria-hidden className="size-4 shrink-0 text-muted" />
        <span className="min-w-0 flex-1">
          <span className="block truncate text-[13px] font-semibold">
            <code className="mr-1 rounded bg-hover px-1 text-xs">{module.id}</code>
            {stepLabel(module)}
          </span>
          <span className="block truncate text-xs text-muted">
            {KIND_LABEL[module.value.type] ?? module.value.type}
            {module.suspend ? " · approval" : ""}
            {module.skip_if ? " · skip if" : ""}
            {status ? ` · ${status}` : ""}
          </span>
        </span>
        {module.suspend && <CirclePause aria-hidden className="size-4 shrink-0 text-warn" />}
        {error && <CircleAlert aria-hidden className="size-4 shrink-0 text-bad" />}
        {error && <span className="sr-only">, has an error</span>}
      </button>
    </div>
  );
}

function IoNode({ data, id }: NodeProps<Node<LabelData>>) {
  const { selected, onSelect } = useContext(GraphContext);
  const kind = id === "__input" ? "input" : "result";
  const isSelected = selected?.kind === kind;
  return (
    <div
      className={cn(
        "flex h-full w-full items-center justify-center rounded-full border-2 border-accent bg-panel text-fg",
        isSelected && "outline-2 outline-offset-2 outline-accent",
      )}
      data-testid={`flow-node-${kind}`}
    >
      <Handles />
      {onSelect ? (
        <button
          type="button"
          className="h-full w-full rounded-full border-0 bg-transparent text-[13px] font-semibold text-fg"
          aria-pressed={isSelected}
          onClick={() => onSelect({ kind } as GraphSelection)}
        >
          {data.label}
        </button>
      ) : (
        <span className="text-[13px] font-semibold">{data.label}</span>
      )}
    </div>
  );
}

function EndNode({ data }: NodeProps<Node<LabelData>>) {
  return (
    <div className="flex h-full w-full items-center justify-center rounded-full border border-line bg-hover text-xs text-muted">
      <Handles />
      {data.label}
    </div>
  );
}

function LaneNode({ data }: NodeProps<Node<LaneData>>) {
  const { selected, onSelect } = useContext(GraphContext);
  const isSelected = selected?.kind === "lane" && selected.path.join(".") === data.path.join(".");
  return (
    <div
      className={cn(
        "flex h-full w-full items-center justify-center rounded-md border-2 border-dashed border-line bg-panel text-xs text-muted",
        isSelected && "border-accent outline-2 outline-offset-2 outline-accent",
      )}
      data-testid="flow-lane"
      data-lane={data.path.join(".")}
    >
      <Handles />
      {onSelect ? (
        <button
          type="button"
          className="h-full w-full border-0 bg-transparent px-2 text-xs text-muted"
          aria-pressed={isSelected}
          aria-label={`${data.label}: empty, select to add a step here`}
          onClick={() => onSelect({ kind: "lane", path: data.path, label: data.label })}
        >
          {data.label}: empty
        </button>
      ) : (
        <span>{data.label}: empty</span>
      )}
    </div>
  );
}

const NODE_TYPES = { step: StepNode, io: IoNode, end: EndNode, lane: LaneNode };

/** The flow as nodes and edges, laid out top-down by dagre: branches side by side, loops as a start/end pair. */
export function layoutFlow(value: FlowValue): { nodes: Node[]; edges: Edge[] } {
  const nodes: Node[] = [];
  const edges: Edge[] = [];
  const add = (id: string, type: keyof typeof SIZES, data: Record<string, unknown>) => {
    nodes.push({ id, type, data, position: { x: 0, y: 0 }, ...SIZES[type] });
  };
  const connect = (from: string[], to: string, label?: string) => {
    for (const source of from) {
      edges.push({
        id: `${source}->${to}`,
        source,
        target: to,
        ...(label ? { label, labelStyle: { fontSize: 11 } } : {}),
      });
    }
  };
  const build = (modules: FlowModule[], path: ListPath, entry: string[]): string[] => {
    let exits = entry;
    modules.forEach((module, index) => {
      const nodeId = `step:${module.id}`;
      const lists = childLists(module, [...path, index]);
      add(nodeId, "step", { module, container: lists.length > 0 });
      connect(exits, nodeId);
      if (lists.length === 0) {
        exits = [nodeId];
        return;
      }
      const laneExits: string[] = [];
      for (const list of lists) {
        if (list.modules.length === 0) {
          const laneId = `lane:${list.path.join(".")}`;
          add(laneId, "lane", { path: list.path, label: list.label });
          connect([nodeId], laneId);
          laneExits.push(laneId);
        } else {
          laneExits.push(...build(list.modules, list.path, [nodeId]));
        }
      }
      const loop = module.value.type === "forloopflow" || module.value.type === "whileloopflow";
      const endId = `end:${module.id}`;
      add(endId, "end", { label: loop ? `end of loop ${module.id}` : `end of ${module.id}` });
      connect(laneExits, endId);
      exits = [endId];
    });
    return exits;
  };
  add("__input", "io", { label: "Input" });
  const exits = build(value.modules, ["modules"], ["__input"]);
  add("__result", "io", { label: "Result" });
  connect(exits, "__result");
  if (value.failure_module) {
    const module = value.failure_module;
    add(`step:${module.id}`, "step", { module, container: false });
  }

  const graph = new dagre.graphlib.Graph();
  graph.setGraph({ rankdir: "TB", nodesep: 28, ranksep: 36, marginx: 8, marginy: 8 });
  graph.setDefaultEdgeLabel(() => ({}));
  for (const node of nodes) graph.setNode(node.id, { width: node.width, height: node.height });
  for (const edge of edges) graph.setEdge(edge.source, edge.target);
  dagre.layout(graph);
  for (const node of nodes) {
    const placed = graph.node(node.id);
    node.position = { x: placed.x - (node.width ?? 0) / 2, y: placed.y - (node.height ?? 0) / 2 };
  }
  return { nodes, edges };
}

function ignoreClick() {}

/**
 * The least zoom a fit goes to: labels are 12 px, and a long flow fitted whole shrank them to 7 px.
 * Past it the graph keeps this zoom, starts at its first step, and the rest scrolls.
 */
const MIN_FIT_ZOOM = 0.8;
const FIT_PADDING = 0.1;
const EDGE_GAP = 12;

function FitOnChange({ signature }: { signature: string }) {
  const flow = useReactFlow();
  const store = useStoreApi();
  useEffect(() => {
    const timer = setTimeout(() => {
      const { width, height } = store.getState();
      const bounds = flow.getNodesBounds(flow.getNodes());
      const room = 1 + 2 * FIT_PADDING;
      const fit = Math.min(width / (bounds.width * room), height / (bounds.height * room));
      if (!(fit < MIN_FIT_ZOOM)) {
        void flow.fitView({ padding: FIT_PADDING, maxZoom: 1 });
        return;
      }
      const zoom = MIN_FIT_ZOOM;
      const wide = bounds.width * zoom > width - 2 * EDGE_GAP;
      void flow.setViewport({
        x: (wide ? EDGE_GAP : (width - bounds.width * zoom) / 2) - bounds.x * zoom,
        y: EDGE_GAP - bounds.y * zoom,
        zoom,
      });
    }, 30);
    return () => clearTimeout(timer);
  }, [flow, store, signature]);
  return null;
}

/**
 * The flow drawn as a graph. In the editor, clicking a node selects it (`onSelect`); in a run,
 * `statuses` colours each step and `errors` marks the steps the server refused.
 */
export function FlowGraph({
  value,
  selected = null,
  onSelect,
  statuses,
  errors,
  height = 560,
  label = "Flow graph",
}: {
  value: FlowValue;
  selected?: GraphSelection | null;
  onSelect?: (selection: GraphSelection) => void;
  statuses?: Record<string, StepRunStatus>;
  errors?: Record<string, string>;
  height?: number;
  label?: string;
}) {
  const theme = usePageTheme();
  const { nodes, edges } = useMemo(() => layoutFlow(value), [value]);
  const signature = nodes.map((node) => node.id).join(",");
  const context = useMemo(
    () => ({ selected, onSelect, statuses, errors }),
    [selected, onSelect, statuses, errors],
  );
  return (
    <GraphContext.Provider value={context}>
      <section
        className="min-w-0 overflow-hidden rounded-md border border-line bg-bg"
        style={{ height }}
        aria-label={label}
        data-testid="flow-graph"
      >
        <ReactFlowProvider>
          <ReactFlow
            nodes={nodes}
            edges={edges}
            nodeTypes={NODE_TYPES}
            colorMode={theme}
            fitView
            fitViewOptions={{ padding: FIT_PADDING, maxZoom: 1, minZoom: MIN_FIT_ZOOM }}
            minZoom={0.2}
            maxZoom={1.5}
            nodesDraggable={false}
            nodesConnectable={false}
            elementsSelectable={false}
            nodesFocusable={false}
            edgesFocusable={false}
            // A click handler keeps pointer events on the nodes (their buttons select them).
            onNodeClick={ignoreClick}
            zoomOnScroll={false}
            panOnScroll
            preventScrolling={false}
            proOptions={{ hideAttribution: true }}
          >
            <Controls showInteractive={false} />
            <FitOnChange signature={signature} />
          </ReactFlow>
        </ReactFlowProvider>
      </section>
    </GraphContext.Provider>
  );
}
