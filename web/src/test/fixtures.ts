import type { User } from '@/types/generated';

export const anna: User = {
  _id: '01959a4e-6b2f-7c3d-9e8a-4f1b2c3d4e5f',
  name: 'Anna Kovács',
  email: 'anna@example.com',
  profileImage: null,
  role: 'user',
  settings: {
    language: 'hu-HU',
    aiPersonalization: { enabled: false, userName: '', userInfo: '' },
  },
  createdAt: '2025-03-14T09:31:02.114+00:00',
};

export function jsonResponse(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
}
