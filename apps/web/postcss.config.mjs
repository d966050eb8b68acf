// Tailwind CSS v4 through PostCSS, the way Next.js loads it.
export default { plugins: { "@tailwindcss/postcss": {} } };
