import type { Metadata } from "next";

export const metadata: Metadata = {
  title: "rangeid on Next.js",
  description: "Unique IDs from rangeid in route handlers (Node.js and edge runtimes) and in the browser",
};

export default function RootLayout({ children }: LayoutProps<"/">) {
  return (
    <html lang="en">
      <body style={{ fontFamily: "system-ui, sans-serif", maxWidth: "48rem", margin: "2rem auto", padding: "0 1rem" }}>
        {children}
      </body>
    </html>
  );
}
