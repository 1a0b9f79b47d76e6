import Link from "next/link";

export default function Home() {
  return (
    <main>
      <h1>rangeid on Next.js</h1>
      <ul>
        <li>
          <a href="/api/ids/node?n=100">/api/ids/node</a>: 100 IDs from a route handler on the Node.js runtime
        </li>
        <li>
          <a href="/api/ids/edge?n=100">/api/ids/edge</a>: 100 IDs from a route handler on the edge runtime
        </li>
        <li>
          <Link href="/browser">/browser</Link>: 100 IDs taken in this browser (a client component)
        </li>
      </ul>
    </main>
  );
}
