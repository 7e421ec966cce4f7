import { groupDigits } from "../../workers/output-limits";
import type { JsonNode } from "./json-tree";

/** The levels shown open at first; deeper ones are folded. */
const OPEN_DEPTH = 2;

/** A JSON value as nested <details>: each object and array folds, and is reached by the keyboard. */
export function JsonTree({ tree }: { tree: JsonNode }) {
  return (
    <div className="json-tree">
      <JsonEntry node={tree} depth={0} />
    </div>
  );
}

function JsonEntry({ node, depth }: { node: JsonNode; depth: number }) {
  const key = node.key !== undefined && <span className="json-key">{node.key}: </span>;
  if (node.kind === "value") {
    return (
      <div className="json-value">
        {key}
        {node.text}
      </div>
    );
  }
  const [open, close] = node.kind === "array" ? ["[", "]"] : ["{", "}"];
  const size = `${groupDigits(node.size)} ${node.kind === "array" ? "item" : "key"}${node.size === 1 ? "" : "s"}`;
  return (
    <details open={depth < OPEN_DEPTH}>
      <summary>
        {key}
        {`${open}…${close} ${size}`}
      </summary>
      <div className="json-children">
        {node.children?.map((child, index) => <JsonEntry key={index} node={child} depth={depth + 1} />)}
        {node.more > 0 && <div className="notice notice-info">{`… ${groupDigits(node.more)} more not shown`}</div>}
      </div>
    </details>
  );
}
